-- how many buyers like each kind of event
{{ interest_counts(ref('int_buyers_extracted_from_users'), 'buyers') }}
