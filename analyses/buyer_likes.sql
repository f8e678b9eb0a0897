-- how many buyers like each kind of event
with

buyers as (

    select * from {{ ref('int_buyers_extracted_from_users') }}

),

likes as (

    select
        count(*) as buyers,
        count_if(likes_sports) as sports,
        count_if(likes_theatre) as theatre,
        count_if(likes_concerts) as concerts,
        count_if(likes_jazz) as jazz,
        count_if(likes_classical) as classical,
        count_if(likes_opera) as opera,
        count_if(likes_rock) as rock,
        count_if(likes_vegas) as vegas,
        count_if(likes_broadway) as broadway,
        count_if(likes_musicals) as musicals
    from buyers

)

select * from likes
