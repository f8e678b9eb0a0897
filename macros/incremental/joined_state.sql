{% macro joined_state_relation(relation, column) -%}
    {#- Where an incremental fact keeps the values it carries from the rows
        joined on `column`: the fact's name with `__known_<column>`. -#}
    {{ return(companion_table(relation, '__known_' ~ column)) }}
{%- endmacro %}


{% macro carried_columns(joined_relation, fact_columns, column) -%}
    {#- The columns a fact carries from the model joined on `column`: those
        of `fact_columns` the joined model has, but its key and the lineage
        columns. A column both the base and the joined model have is taken
        too: comparing one column more only makes more candidates. -#}
    {%- set carried = [] -%}
    {%- for joined_column in adapter.get_columns_in_relation(joined_relation) -%}
        {%- if joined_column.name in fact_columns and joined_column.name not in [
            column, 'bronze_commit_time', 'bronze_read_horizon'
        ] -%}
            {%- do carried.append(joined_column.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(carried) }}
{%- endmacro %}


{% macro joined_states(joined) -%}
    {#- For each foreign key in the model's meta `compared_joins`
        (fact_candidate_keys), the
        state table the last build left (keep_joined_state) and the columns
        to compare, when the table exists: {column: {'relation': ...,
        'columns': [...]}}. `joined` maps each foreign key to [its bronze
        table, the joined model]. None in a unit test (its `this` is a
        fixture) or when dbt parses; then every joined row bronze committed
        since the watermark is a change. -#}
    {%- set states = {} -%}
    {%- if not execute or this is string -%}{{ return(states) }}{%- endif -%}
    {%- set fact_columns = hudi_data_columns(this) -%}
    {%- for column in (config.get('meta') or {}).get('compared_joins') or {} -%}
        {%- set state = joined_state_relation(this, column) -%}
        {%- set carried = carried_columns(joined[column][1], fact_columns, column) -%}
        {%- if carried and adapter.get_relation(
            database=state.database, schema=state.schema, identifier=state.identifier
        ) is not none -%}
            {%- do states.update({column: {'relation': state, 'columns': carried}}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(states) }}
{%- endmacro %}


{% macro keep_joined_state(relation) -%}
    {#- Post-hook of the incremental facts: for each join compared by value
        (meta `compared_joins`), replaces the Parquet table
        `<fact>__known_<column>` with the joined rows' carried columns as
        this build read them, tagged with its read horizon. The next
        incremental run counts a joined row committed since as changed only
        when one of those columns differs (fact_candidate_keys).

        Only rows bronze committed up to the horizon are kept: they were
        complete when the build read bronze and are unchanged since, so the
        fact carries exactly these values. A row committed later is left
        out: the next run takes it as changed. The horizon comes from the
        rows this build wrote (the merge batch; the table on a full build);
        when it wrote none, the fact's stored horizon did not move and the
        state is left as it is. A state whose horizon is not the fact's
        stored one (this hook failed after a merge) is not used. -#}
    {%- set joins = (config.get('meta') or {}).get('compared_joins') or {} -%}
    {%- if not execute or not joins -%}{{ return('') }}{%- endif -%}
    {%- set delete_column = config.get('meta')['merge_delete_column'] -%}
    {%- set written -%}
        {%- if is_incremental() -%}
            {{ merge_batch_relation(relation) }} where not {{ delete_column }}
        {%- else -%}
            {{ relation }}
        {%- endif -%}
    {%- endset -%}
    {%- set horizon = run_query(
        'select max(bronze_read_horizon) from ' ~ written
    ).columns[0].values()[0] -%}
    {%- if horizon is none -%}{{ return('') }}{%- endif -%}
    {%- for column, model_name in joins.items() -%}
        {%- set joined = ref(model_name) -%}
        {%- set carried = carried_columns(joined, hudi_data_columns(relation), column) -%}
        {%- set query -%}
            select
                {{ column }},
                {%- for carried_column in carried %}
                {{ carried_column }},
                {%- endfor %}
                '{{ horizon }}' as fact_read_horizon
            from {{ joined }}
            where bronze_commit_time <= '{{ horizon }}'
        {%- endset -%}
        {%- do replace_parquet_table(joined_state_relation(relation, column), query) -%}
    {%- endfor -%}
{%- endmacro %}
