{% macro incremental_fact(
    rows, base, joined, bronze_table, key_column, fact_key, columns,
    compare_joined=[]
) -%}
    {#- A fact table kept as an incremental Hudi merge on bronze commits, one
        row per `key_column` of `rows` (an intermediate model carrying a
        `bronze_commit_time` that counts its joined rows' commits too).

        A full build takes every row. An incremental run merges only the
        keys whose rows bronze committed after the read horizon the last run
        stored (bronze_watermark; bronze_timeline says why it is not the
        newest commit merged), and deletes the keys soft-deleted in
        `bronze_table` since then: the merge deletes on
        `is_deleted_in_bronze` (spark__get_merge_sql), and a key the table
        no longer holds matches nothing. Every row the run writes carries
        this run's horizon, so the watermark moves in the same Hudi commit
        as the rows. `fact_key` is the surrogate key the
        merge matches on; `columns` are the columns of `rows` the fact
        carries between its keys and its lineage.

        Why `base` and `joined`: `rows` is a join whose commit time is the
        newest of its rows', so a filter on it cannot reach the tables and
        every run would join them whole. `base` is the model `rows` is keyed
        on (its `key_column` and foreign keys, its own commit) and `joined`
        maps each foreign key of `base` to [its bronze table, the name of the
        model that carries its rows' commit time]. The keys whose base row,
        joined row or joined row's deletion bronze committed since the
        horizon are found on narrow reads of those models (candidate_keys);
        `rows` is read for them only (an IN filter that Spark pushes down to
        the base model's rows); the query reads no stored row.

        Why no comparison with the stored rows: reading them whole for the
        candidate keys scanned every row of the merge-on-read table (a semi
        join prunes no file), 5 s of a 14 s batch at --scale 10, to drop
        rows a full build would write the same; `compare_joined` already
        keeps the fan-out of joined changes the fact does not carry out of
        the candidates.

        Why `compare_joined`: the fan-out is decided before the join. A
        foreign key listed there (a joined row reaching many fact rows and
        changing mostly in columns the fact does not carry: an event, whose
        category's description reaches thousands of sales) counts a joined
        row as changed only when a column the fact carries from it differs
        from the values the last build read, which a post-hook keeps next to
        the fact (keep_joined_state). At --scale 10 a change batch that
        rewrites two category descriptions made 340,178 of 1.73M sales
        candidates for 31,544 rows written; comparing the events' carried
        columns, 28,126.

        Why merge-on-read with a bucket index: a merge appends the rows it
        writes to log files, where copy-on-write rewrites every base file
        holding one of them (changed keys spread over all dates reach nearly
        every file). The bucket index hashes the key to one of a fixed set of
        file groups, so inserts go to logs too (no small base files) and the
        merge looks no key up in the stored files. Compaction of the logs
        follows a build unless the var `maintain_facts` is false: the hourly
        job leaves it to the daily one (compact_fact). The first post-hooks
        copy the rows written for the hourly build's tests
        (keep_touched_rows), keep the compared joins' values
        (keep_joined_state) and drop the table the merge read its batch from
        (drop_merge_batch). The metadata table is off, as for bronze: an
        unpartitioned table is one folder to list. -#}
    {%- set compared_joins = {} -%}
    {%- for column in compare_joined -%}
        {%- do compared_joins.update({column: joined[column][1]}) -%}
    {%- endfor -%}
    {{ config(
        materialized='incremental',
        file_format='hudi',
        incremental_strategy='merge',
        unique_key=fact_key,
        on_schema_change='fail',
        options={
            'type': 'mor',
            'preCombineField': 'bronze_commit_time',
            'hoodie.index.type': 'BUCKET',
            'hoodie.bucket.index.num.buckets': var('fact_buckets'),
            'hoodie.compact.inline': 'false',
            'hoodie.metadata.enable': 'false',
        },
        post_hook=[
            "{{ keep_touched_rows(this) }}",
            "{{ keep_joined_state(this) }}",
            "{{ drop_merge_batch(this) }}",
            "{{ compact_fact(this) }}",
        ],
        meta={
            'merge_delete_column': 'is_deleted_in_bronze',
            'compared_joins': compared_joins,
        },
        persist_docs={'relation': true, 'columns': false},
    ) }}
    {#- Column comments are not persisted: every Hudi write resets them in
        the catalog, and each ALTER ... COMMENT would be one more Hudi commit.
        The deleted records and the joined models are referenced here, not
        only in the incremental branch, so that dbt knows the dependencies
        when it parses. -#}
    {%- set deleted_records = ref('stg_tickit__deleted_records') %}
    {%- set joined_relations = {} %}
    {%- for column, joined_model in joined.items() %}
        {%- do joined_relations.update({column: ref(joined_model[1])}) %}
    {%- endfor %}
    {%- set timeline = bronze_timeline() %}
    {%- if is_incremental() %}
        {%- set stored = bronze_watermark() %}
        {%- set watermark = stored.watermark %}
        {%- set states = joined_states(compare_joined, joined_relations, columns) %}
        {%- set key_type = stored_column_type(key_column) %}
    {%- endif %}
with

fact_rows as (

    select * from {{ rows }}

),

{% if is_incremental() %}

deleted_records as (

    select * from {{ deleted_records }}
    where bronze_commit_time > {{ watermark }}

),
{%- for column, joined_model in joined.items() %}

{%- set state = states.get(column) %}

-- the {{ column }}s whose row bronze committed or deleted since the horizon
{%- if state %}, if a column the fact carries from it changed (keep_joined_state)
{%- endif %}
changed_{{ column }} as (

    select joined_rows.{{ column }}
    from {{ joined_relations[column] }} as joined_rows
    {%- if state %}
    left join {{ state.relation }} as known_rows
        on
            joined_rows.{{ column }} = known_rows.{{ column }}
            and known_rows.fact_read_horizon = {{ stored.horizon }}
    {%- endif %}
    where
        joined_rows.bronze_commit_time > {{ watermark }}
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
-- horizon, found on narrow reads of the base model and the joined ones, and
-- the keys soft-deleted since
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
        base.bronze_commit_time > {{ watermark }}
        {%- for column in joined %}
        or changed_{{ column }}.{{ column }} is not null
        {%- endfor %}

    union all

    select record_id as {{ key_column }} from deleted_keys

),

-- the rows for those keys, filtered by an IN subquery rather than a semi
-- join: Spark pushes a filter on the key through the intermediate model's
-- projection and outer joins down to the base model's rows; a semi join
-- stayed above them once a computed column of the view was selected (the
-- join then ran for all 1.73M sales at --scale 10)
incoming_rows as (

    select
        fact_rows.{{ key_column }},
        {%- for column in columns %}
        fact_rows.{{ column }},
        {%- endfor %}
        fact_rows.bronze_commit_time
    from fact_rows
    where
        fact_rows.{{ key_column }} in (
            select /*+ broadcast(candidate_keys) */ candidate_keys.{{ key_column }}
            from candidate_keys
        )
        and fact_rows.bronze_commit_time > {{ watermark }}

),

-- a delete marker for each key soft-deleted since the horizon, ordered by
-- the newest bronze commit completed when this run looked, or the
-- deletion's if newer: no stored row carries a newer commit
-- (bronze_timeline), so no table type can ignore the delete as stale
-- (apache/hudi#19978 on merge-on-read), and no stored row is read for its
-- ordering value. A key the table no longer holds (a deletion an earlier
-- run applied) matches nothing: the merge neither deletes nor inserts it.
-- The key is cast to the stored key's type: bronze's record ids are bigint.
deleted_rows as (

    select
        cast(record_id as {{ key_type }}) as {{ key_column }},
        greatest(
            bronze_commit_time, {{ timeline.newest_commit }}
        ) as bronze_commit_time
    from deleted_keys

),

-- every row read for the candidate keys, and a delete marker for each
-- deleted key. A soft-deleted key has no incoming row (the base model holds
-- live rows only); the full join keeps one row per key should two reads of
-- a bronze table see different commits.
batch as (

    select
        coalesce(
            incoming_rows.{{ key_column }}, deleted_rows.{{ key_column }}
        ) as {{ key_column }},
        {%- for column in columns %}
        incoming_rows.{{ column }},
        {%- endfor %}
        incoming_rows.{{ key_column }} is null as is_deleted_in_bronze,
        coalesce(
            incoming_rows.bronze_commit_time, deleted_rows.bronze_commit_time
        ) as bronze_commit_time
    from incoming_rows
    full join deleted_rows
        on incoming_rows.{{ key_column }} = deleted_rows.{{ key_column }}

),

{% else %}

batch as (

    select * from fact_rows

),

{% endif %}

final as (

    select
        {{ surrogate_key([key_column]) }} as {{ fact_key }},
        {{ key_column }},
        {%- for column in columns %}
        {{ column }},
        {%- endfor %}
        {%- if is_incremental() %}
        is_deleted_in_bronze,
        {%- endif %}
        bronze_commit_time,
        {{ timeline.read_horizon }} as bronze_read_horizon

    from batch

)

select * from final
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
