with

source as (

    select * from {{ source('tickit', 'date') }}

),

renamed as (

    select
        ----------  ids
        cast(dateid as int) as date_id,

        ----------  dates
        caldate as calendar_date,

        ----------  calendar parts
        upper(trim(day)) as day_of_week,
        dayofmonth(caldate) as day_of_month,
        cast(week as int) as week_of_year,
        upper(trim(month)) as month_name,
        month(caldate) as month_number,
        cast(trim(qtr) as int) as quarter_of_year,
        cast(year as int) as calendar_year,

        ----------  booleans
        holiday as is_holiday,

        {{ bronze_lineage_columns() }}

    from source
    where not _cdc_is_deleted

)

select * from renamed
