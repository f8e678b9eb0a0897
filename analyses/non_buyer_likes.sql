-- how many non-buyers like each kind of event: what to offer them
{{ interest_counts(ref('dim_non_buyers'), 'non_buyers') }}
