-- expected range for the day of the month: 1 to 31
select day_of_month
from {{ ref('stg_tickit__dates') }}
group by day_of_month
having not (day_of_month >= 1 and day_of_month <= 31)
