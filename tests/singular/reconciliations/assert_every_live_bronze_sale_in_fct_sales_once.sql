-- reconciliation: every live bronze sale is in fct_sales exactly once, and
-- fct_sales holds no other sale (deleted at the source or never there)
{{ keys_not_once_in_fact('sales', 'salesid', ref('fct_sales'), 'sale_id') }}
