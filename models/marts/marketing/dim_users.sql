with

user_versions as (

    select * from {{ ref('int_users_versioned_from_changelog') }}

),

final as (

    select
        ----------  keys
        user_version_key,
        user_id,
        cast(version_number as int) as version_number,

        ----------  strings
        username,
        first_name,
        last_name,
        concat(last_name, ', ', first_name) as full_name,
        city,
        state,
        email,
        phone,
        loyalty_tier,

        ----------  booleans
        {{ interest_columns() }},

        ----------  validity
        valid_from,
        valid_to,
        valid_from_position,
        is_current,
        is_ended_by_delete

    from user_versions

)

select * from final
