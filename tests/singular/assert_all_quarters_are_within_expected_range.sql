-- expected range for the quarter of the year: 1 to 4
select quarter_of_year
from {{ ref('stg_tickit__dates') }}
group by quarter_of_year
having not (quarter_of_year >= 1 and quarter_of_year <= 4)
