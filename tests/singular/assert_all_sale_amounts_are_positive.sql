-- every sale was paid for: a price paid above zero
select
    sale_id,
    price_paid
from {{ ref('fct_sales') }}
where not price_paid > 0
