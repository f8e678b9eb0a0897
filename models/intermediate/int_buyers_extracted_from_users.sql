{#- Live users who bought at least one ticket, with the day of their first
    purchase. -#}
{{ users_with_first_sale('buyer_id', 'first_purchase_date') }}
