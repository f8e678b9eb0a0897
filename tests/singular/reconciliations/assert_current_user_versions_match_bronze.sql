-- reconciliation of the SCD type 2 dimension: every live bronze user has
-- exactly one current version holding its bronze values, and a user deleted
-- at the source has none
with

bronze_users as (

    select
        userid as user_id,
        username,
        firstname as first_name,
        lastname as last_name,
        city,
        email
    from {{ source('tickit', 'users') }}
    where not _cdc_is_deleted

),

current_versions as (

    select *
    from {{ ref('dim_users') }}
    where is_current

)

select
    coalesce(bronze_users.user_id, current_versions.user_id) as user_id,
    bronze_users.user_id is not null as is_live_in_bronze,
    current_versions.user_id is not null as has_current_version
from bronze_users
full outer join current_versions
    on bronze_users.user_id = current_versions.user_id
where
    bronze_users.user_id is null
    or current_versions.user_id is null
    or not (bronze_users.username <=> current_versions.username)
    or not (bronze_users.first_name <=> current_versions.first_name)
    or not (bronze_users.last_name <=> current_versions.last_name)
    or not (bronze_users.city <=> current_versions.city)
    or not (bronze_users.email <=> current_versions.email)
