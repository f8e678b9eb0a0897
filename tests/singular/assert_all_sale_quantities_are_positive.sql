-- every sale sold at least one ticket
select
    sale_id,
    quantity_sold
from {{ ref('fct_sales') }}
where not quantity_sold > 0
