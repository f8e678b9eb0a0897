-- expected range for the week of the year: 1 to 53
select week_of_year
from {{ ref('stg_tickit__dates') }}
group by week_of_year
having not (week_of_year >= 1 and week_of_year <= 53)
