{#- SCD type 2 from the user changelog: a new version at every change of a
    tracked column; a delete, or a truncate, ends the open version. Changes
    are ordered by their source position, never by arrival. -#}
{%- set tracked_columns = [
    'username', 'first_name', 'last_name', 'city', 'state', 'email', 'phone',
    'loyalty_tier', 'likes_sports', 'likes_theatre', 'likes_concerts',
    'likes_jazz', 'likes_classical', 'likes_opera', 'likes_rock',
    'likes_vegas', 'likes_broadway', 'likes_musicals',
] -%}

with

users_changelog as (

    select * from {{ ref('stg_tickit__users_changelog') }}

),

truncates as (

    -- every truncate once, in source order, as one array: a truncate ends
    -- every version open at that point (no join back to the changes: Spark's
    -- constraint propagation explodes on self-joins of this wide relation)
    select
        array_sort(
            array_distinct(collect_list(struct(change_position, changed_at)))
        ) as truncate_events
    from users_changelog
    where change_operation = 't'

),

user_changes as (

    select
        users_changelog.*,
        users_changelog.change_operation = 'd' as is_delete,
        {{ surrogate_key(tracked_columns) }} as tracked_hash,
        -- how many truncates came before the change: a change after a
        -- truncate never continues a version opened before it
        size(
            filter(
                truncates.truncate_events,
                t -> t.change_position < users_changelog.change_position
            )
        ) as truncate_epoch,
        -- the first truncate after the change, if any
        try_element_at(
            filter(
                truncates.truncate_events,
                t -> t.change_position > users_changelog.change_position
            ),
            1
        )['change_position'] as next_truncate_position,
        try_element_at(
            filter(
                truncates.truncate_events,
                t -> t.change_position > users_changelog.change_position
            ),
            1
        )['changed_at'] as next_truncated_at
    from users_changelog
    cross join truncates
    where
        users_changelog.change_operation != 't'
        and users_changelog.user_id is not null

),

sequenced as (

    select
        *,
        lag(change_position) over by_position as previous_position,
        lag(tracked_hash) over by_position as previous_hash,
        lag(is_delete) over by_position as previous_is_delete,
        lag(truncate_epoch) over by_position as previous_truncate_epoch
    from user_changes
    window by_position as (partition by user_id order by change_position)

),

-- the changes that start a version (or end one, for deletes)
boundaries as (

    select *
    from sequenced
    where
        case
            when is_delete
                then
                    previous_position is not null
                    and not previous_is_delete
                    and truncate_epoch = previous_truncate_epoch
            else
                previous_position is null
                or previous_is_delete
                or truncate_epoch != previous_truncate_epoch
                or tracked_hash != previous_hash
        end

),

versions as (

    select
        *,
        lead(change_position) over by_position as next_position,
        lead(changed_at) over by_position as next_changed_at,
        lead(is_delete) over by_position as next_is_delete,
        -- ended by a truncate when one comes before the next boundary
        coalesce(
            next_truncate_position
            < coalesce(lead(change_position) over by_position, '~'),
            false
        ) as is_ended_by_truncate
    from boundaries
    window by_position as (partition by user_id order by change_position)

),

final as (

    select
        {{ surrogate_key(['user_id', 'change_position']) }}
            as user_version_key,
        user_id,
        row_number() over (
            partition by user_id order by change_position
        ) as version_number,
        username,
        first_name,
        last_name,
        city,
        state,
        email,
        phone,
        loyalty_tier,
        likes_sports,
        likes_theatre,
        likes_concerts,
        likes_jazz,
        likes_classical,
        likes_opera,
        likes_rock,
        likes_vegas,
        likes_broadway,
        likes_musicals,
        changed_at as valid_from,
        case
            when is_ended_by_truncate then next_truncated_at
            else next_changed_at
        end as valid_to,
        change_position as valid_from_position,
        next_position is null and not is_ended_by_truncate as is_current,
        is_ended_by_truncate
        or coalesce(next_is_delete, false) as is_ended_by_delete

    from versions
    where not is_delete

)

select * from final
