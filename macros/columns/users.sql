{% macro user_columns_from_bronze(relation) -%}
    {#- A user's attributes renamed from a bronze users table (`users` or
        `users_changelog`), in the order the models keep them; loyaltytier,
        which bronze gains mid-stream, only once `relation` has it. -#}
    username,
        firstname as first_name,
        lastname as last_name,
        city,
        state,
        email,
        phone,
        {{ optional_column(relation, 'loyaltytier', 'string') }} as loyalty_tier,
        {{ interest_columns(from_bronze=true) }}
{%- endmacro %}


{% macro user_profile_columns(relation) -%}
    {#- Where a user lives, how to reach them and what they like: the columns
        the buyer, seller and non-buyer models carry after their keys. -#}
    {{ relation }}.city,
        {{ relation }}.state,
        {{ relation }}.email,
        {{ relation }}.phone,
        {{ interest_columns(relation) }}
{%- endmacro %}


{% macro users_with_first_sale(role_column, first_date_column) -%}
    {#- Live users who took part in at least one live sale as `role_column`
        (buyer_id, seller_id), with their full name and, as
        `first_date_column`, the day of their first such sale. -#}
with

users as (

    select * from {{ ref('stg_tickit__users') }}

),

sales as (

    select * from {{ ref('stg_tickit__sales') }}

),

first_sales as (

    select
        {{ role_column }} as user_id,
        cast(min(sold_at) as date) as {{ first_date_column }}
    from sales
    group by {{ role_column }}

),

final as (

    select
        users.user_id,
        users.username,
        concat(users.last_name, ', ', users.first_name) as full_name,
        first_sales.{{ first_date_column }},
        {{ user_profile_columns('users') }}

    from users
    inner join first_sales
        on users.user_id = first_sales.user_id

)

select * from final
{%- endmacro %}


{% macro bronze_lineage_columns(source_updated_at=true) -%}
    {#- When bronze got a row and from which commit: the lineage columns of
        every staging model (source_updated_at where the source time is not
        already a column of its own). -#}
    {%- if source_updated_at %}
    _cdc_source_ts as source_updated_at,
        {% endif -%}
    _cdc_ingested_at as ingested_at,
        _hoodie_commit_time as bronze_commit_time
{%- endmacro %}
