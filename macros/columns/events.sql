{% macro event_context_columns(relation) -%}
    {#- What a sale or a listing carries about its event: the event's name,
        category and venue, from `relation` (the joined events). -#}
    {{ relation }}.event_name,
        {{ relation }}.category_group,
        {{ relation }}.category_name,
        {{ relation }}.venue_name,
        {{ relation }}.venue_city,
        {{ relation }}.venue_state
{%- endmacro %}
