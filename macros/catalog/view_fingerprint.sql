{% macro view_definition_md5(sql) -%}
    {#- What a view is made of: its compiled SQL and the descriptions it
        persists (the view's comment and its columns' comments). -#}
    {{ return(local_md5(sql ~ tojson(model.columns) ~ (model.description or ''))) }}
{%- endmacro %}


{% macro stored_view_definition_md5(relation) -%}
    {#- The fingerprint the view was created with ('' when it has none).

        Read from the table properties in the `information` of the relation
        dbt's cache holds (`show table extended` of the schema, once when the
        run starts; only this run builds the view), which saves a query per
        view: 0.25 s each, 15 views in an hourly build. Asked of the server
        when the cache has no such text (a relation dbt did not list). -#}
    {%- set listed = modules.re.search(
        'Table Properties: \\[[^\\n]*lakehouse[.]definition_md5=([0-9a-f]{32})',
        relation.information or ''
    ) -%}
    {%- if listed -%}{{ return(listed.group(1)) }}{%- endif -%}
    {%- set found = run_query(
        "show tblproperties " ~ relation ~ " ('lakehouse.definition_md5')"
    ) -%}
    {{ return(found.rows[0][1] if found.rows | length > 0 else '') }}
{%- endmacro %}
