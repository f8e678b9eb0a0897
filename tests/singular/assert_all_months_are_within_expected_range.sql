-- expected range for the month of the year: 1 to 12
select month_number
from {{ ref('stg_tickit__dates') }}
group by month_number
having not (month_number >= 1 and month_number <= 12)
