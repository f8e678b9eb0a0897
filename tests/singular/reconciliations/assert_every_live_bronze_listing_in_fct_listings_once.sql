-- reconciliation: every live bronze listing is in fct_listings exactly
-- once, and fct_listings holds no other listing
{{ keys_not_once_in_fact(
    'listing', 'listid', ref('fct_listings'), 'listing_id'
) }}
