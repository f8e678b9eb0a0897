{% macro fact_candidate_keys(stored, base, key_column, bronze_table, joined) -%}
    {#- The CTEs an incremental fact's run starts with, ending in
        `candidate_keys`: the keys whose own row, a joined row, or a joined
        row's deletion bronze committed after the watermark `stored`
        (bronze_watermark), and the keys soft-deleted in `bronze_table` since
        (`deleted_keys`, for fact_delete_markers).

        Why a fact filters its intermediate model by these keys: that model
        is a join whose commit time is the newest of its rows', so a filter
        on it alone cannot reach the bronze tables and every run would join
        them whole. The keys are found on narrow reads of `base` (the model
        the fact is keyed on: the key, the foreign keys of `joined`, its own
        commit) and of each joined model; `joined` maps each foreign key to
        [its bronze table, the model carrying the joined rows' commit time].

        A join the model's meta `compared_joins` names counts a joined row as
        changed only when a column the fact carries from it differs from the
        values the last build read (keep_joined_state): an event reaches
        thousands of sales and changes mostly in columns the fact does not
        carry (decision 0006). -#}
    {%- set states = joined_states(joined) %}
deleted_records as (

    select * from {{ ref('stg_tickit__deleted_records') }}
    where bronze_commit_time > {{ stored.watermark }}

),
{%- for column, joined_model in joined.items() %}

{%- set state = states.get(column) %}

-- the {{ column }}s whose row bronze committed or deleted since the horizon
{%- if state %}, if a column the fact carries from it changed (keep_joined_state)
{%- endif %}
changed_{{ column }} as (

    select joined_rows.{{ column }}
    from {{ joined_model[1] }} as joined_rows
    {%- if state %}
    left join {{ state.relation }} as known_rows
        on
            joined_rows.{{ column }} = known_rows.{{ column }}
            and known_rows.fact_read_horizon = {{ stored.horizon }}
    {%- endif %}
    where
        joined_rows.bronze_commit_time > {{ stored.watermark }}
        {%- if state %}
        and (
            known_rows.{{ column }} is null
            {%- for carried in state.columns %}
            or not (joined_rows.{{ carried }} <=> known_rows.{{ carried }})
            {%- endfor %}
        )
        {%- endif %}
    union
    select record_id as {{ column }} from deleted_records
    where bronze_table = '{{ joined_model[0] }}'

),
{%- endfor %}

-- the keys soft-deleted in the base model's bronze table since the horizon
deleted_keys as (

    select
        record_id,
        bronze_commit_time
    from deleted_records
    where bronze_table = '{{ bronze_table }}'

),

-- the keys whose own row or a joined row bronze committed since the
-- horizon, and the keys soft-deleted since. The fact reads its rows for
-- them with an IN subquery rather than a semi join: Spark pushes a filter
-- on the key through the intermediate model's projection and outer joins
-- down to the base model's rows; a semi join stayed above them once a
-- computed column of the view was selected.
candidate_keys as (

    select
        {%- if joined %} /*+ broadcast(changed_{{ joined | join(', changed_') }}) */{% endif %}
        distinct base.{{ key_column }}
    from {{ base }} as base
    {%- for column in joined %}
    left join changed_{{ column }}
        on base.{{ column }} = changed_{{ column }}.{{ column }}
    {%- endfor %}
    where
        base.bronze_commit_time > {{ stored.watermark }}
        {%- for column in joined %}
        or changed_{{ column }}.{{ column }} is not null
        {%- endfor %}

    union all

    select record_id as {{ key_column }} from deleted_keys

),
{%- endmacro %}


{% macro fact_delete_markers(key_column, timeline, rows) -%}
    {#- A delete marker for each key of `deleted_keys` (fact_candidate_keys):
        the key, cast to the stored key's type (bronze's record ids are
        bigint), and `deleted_commit_time`, the newest bronze commit
        completed when this run looked at the timelines (bronze_timeline),
        or the deletion's if newer. No stored row carries a newer commit, so
        no table type can ignore the delete as stale (apache/hudi#19978 on
        merge-on-read), and no stored row is read for its ordering value. A
        key the table no longer holds (an earlier run deleted it) matches
        nothing: the merge neither deletes nor inserts it. A soft-deleted key
        has no row of its own in the fact's read (the base model holds live
        rows only): the fact's full join keeps the row read should two reads
        of a bronze table see different commits.

        A full build deletes nothing: no marker, in the shape of the fact's
        CTE `rows` (its key's type), so that the fact's query is the same
        in both. -#}
    {%- if is_incremental() %}
    select
        cast(record_id as {{ stored_column_type(key_column) }}) as {{ key_column }},
        greatest(
            bronze_commit_time, {{ timeline.newest_commit }}
        ) as deleted_commit_time
    from deleted_keys
    {%- else %}
    select
        {{ key_column }},
        bronze_commit_time as deleted_commit_time
    from {{ rows }}
    where false
    {%- endif %}
{%- endmacro %}


{% macro stored_column_type(column_name) -%}
    {#- The type of `column_name` in the stored table `this`, to cast a value
        read elsewhere to it: a deleted record's id (bigint for every bronze
        table) must not widen the fact's key, or the merge's schema check
        fails. 'bigint' when `this` is a unit test's fixture, or when
        nothing executes (a linter rendering the model). -#}
    {%- if not execute or this is string -%}{{ return('bigint') }}{%- endif -%}
    {%- for column in adapter.get_columns_in_relation(this)
        if column.name == column_name -%}
        {{ return(column.data_type) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(this ~ ' has no column ' ~ column_name) }}
{%- endmacro %}
