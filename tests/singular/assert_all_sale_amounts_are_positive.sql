-- every sale was paid for: a price paid above zero (in the hourly build,
-- every sale its run merged: touched_rows)
select
    sale_id,
    price_paid
from {{ touched_rows(ref('fct_sales')) }}
where not price_paid > 0
