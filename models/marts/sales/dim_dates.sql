with

dates as (

    select * from {{ ref('stg_tickit__dates') }}

),

final as (

    select
        date_id,
        calendar_date,
        day_of_week,
        day_of_month,
        week_of_year,
        month_name,
        month_number,
        quarter_of_year,
        calendar_year,
        is_holiday

    from dates

)

select * from final
