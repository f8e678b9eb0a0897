-- every sale sold at least one ticket (in the hourly build, every sale its
-- run merged: touched_rows)
select
    sale_id,
    quantity_sold
from {{ touched_rows(ref('fct_sales')) }}
where not quantity_sold > 0
