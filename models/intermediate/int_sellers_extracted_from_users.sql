{#- Live users who sold at least one ticket, with the day of their first
    sale. -#}
{{ users_with_first_sale('seller_id', 'first_sale_date') }}
