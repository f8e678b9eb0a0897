{#- SCD type 2 from the user changelog: a new version at every change of a
    tracked column; a delete, or a truncate, ends the open version. Changes
    are ordered by their source position, never by arrival. -#}
{%- set tracked_columns = [
    'username', 'first_name', 'last_name', 'city', 'state', 'email', 'phone',
    'loyalty_tier',
] + interest_column_names() -%}

with

users_changelog as (

    select * from {{ ref('stg_tickit__users_changelog') }}

),

truncates as (

    -- every truncate once, in source order, as one array: a truncate ends
    -- every version open at that point
    select
        array_sort(
            array_distinct(collect_list(struct(change_position, changed_at)))
        ) as truncate_events
    from users_changelog
    where change_operation = 't'

),

-- the ordering logic runs on narrow rows; the user attributes join back at
-- the end (wide rows through the windows make Spark's constraint inference
-- take minutes to plan the query)
user_changes as (

    select
        users_changelog.change_event_id,
        users_changelog.user_id,
        users_changelog.change_position,
        users_changelog.changed_at,
        users_changelog.change_operation = 'd' as is_delete,
        -- compared as a struct: a hash of the values joined with a separator
        -- took ("Mary-Ann", "Lee") and ("Mary", "Ann-Lee") for no change
        struct({{ tracked_columns | join(', ') }}) as tracked_values,
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
        lag(tracked_values) over by_position as previous_values,
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
                or tracked_values != previous_values
        end

),

versions as (

    select
        *,
        lead(change_position) over by_position as next_position,
        lead(changed_at) over by_position as next_changed_at,
        lead(is_delete) over by_position as next_is_delete,
        -- the running count of versions opened so far, in the same window
        -- as the leads (a row_number over the kept rows would sort the
        -- users' changes once more)
        cast(
            sum(case when is_delete then 0 else 1 end) over by_position as int
        ) as version_number,
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
        {{ surrogate_key(['versions.user_id', 'versions.change_position']) }}
            as user_version_key,
        versions.user_id,
        versions.version_number,
        users_changelog.username,
        users_changelog.first_name,
        users_changelog.last_name,
        users_changelog.city,
        users_changelog.state,
        users_changelog.email,
        users_changelog.phone,
        users_changelog.loyalty_tier,
        {{ interest_columns('users_changelog') }},
        versions.changed_at as valid_from,
        case
            when versions.is_ended_by_truncate then versions.next_truncated_at
            else versions.next_changed_at
        end as valid_to,
        versions.change_position as valid_from_position,
        versions.next_position is null
        and not versions.is_ended_by_truncate as is_current,
        versions.is_ended_by_truncate
        or coalesce(versions.next_is_delete, false) as is_ended_by_delete

    from versions
    inner join users_changelog
        on versions.change_event_id = users_changelog.change_event_id
    where not versions.is_delete

)

select * from final
