-- reconciliation: every live bronze listing is in fct_listings exactly
-- once, and fct_listings holds no other listing
with

bronze_listings as (

    select listid as listing_id
    from {{ source('tickit', 'listing') }}
    where not _cdc_is_deleted

),

mart_listings as (

    select
        listing_id,
        count(*) as occurrences
    from {{ ref('fct_listings') }}
    group by listing_id

)

select
    coalesce(
        bronze_listings.listing_id, mart_listings.listing_id
    ) as listing_id,
    coalesce(mart_listings.occurrences, 0) as occurrences_in_mart,
    bronze_listings.listing_id is not null as is_live_in_bronze
from bronze_listings
full outer join mart_listings
    on bronze_listings.listing_id = mart_listings.listing_id
where
    bronze_listings.listing_id is null
    or mart_listings.listing_id is null
    or mart_listings.occurrences != 1
