import type { LandingStep } from "./LandingStep.js"

/** What a custom field's value is, as text and as JSON, whatever its kind. */
const customFieldValue = {
  text: `CASE f.node ->> '__typename'
    WHEN 'CustomFieldArea' THEN concat_ws(' ', (f.node #>> '{valueArea,length}') || ' x ' || (f.node #>> '{valueArea,width}'), f.node ->> 'unit')
    WHEN 'CustomFieldBoolean' THEN f.node ->> 'valueBoolean'
    WHEN 'CustomFieldLink' THEN f.node ->> 'valueUrl'
    WHEN 'CustomFieldNumber' THEN f.node ->> 'valueNumber'
    WHEN 'CustomFieldSelect' THEN f.node ->> 'valueSelect'
    ELSE f.node ->> 'valueText' END`,
  json: `CASE f.node ->> '__typename'
    WHEN 'CustomFieldArea' THEN f.node -> 'valueArea'
    WHEN 'CustomFieldBoolean' THEN f.node -> 'valueBoolean'
    WHEN 'CustomFieldLink' THEN jsonb_build_object('text', f.node -> 'valueText', 'url', f.node -> 'valueUrl')
    WHEN 'CustomFieldNumber' THEN f.node -> 'valueNumber'
    WHEN 'CustomFieldSelect' THEN f.node -> 'valueSelect'
    ELSE f.node -> 'valueText' END`
}

/** The steps that replace a parent's custom fields with its own (one table for every parent type). */
export const customFieldSteps = (parentType: string): ReadonlyArray<LandingStep> => [
  {
    name: "custom_field_rows",
    sql: (sql) =>
      sql.literal(`SELECT DISTINCT ON (p.node ->> 'id', COALESCE(f.node ->> 'id', f.node ->> 'label'))
          p.node ->> 'id' AS parent_id, COALESCE(f.node ->> 'id', f.node ->> 'label') AS field_key, f.node,
          COALESCE(p.raw -> 'customFields' -> (f.i - 1)::int, f.node) AS raw
        FROM page_rows AS p CROSS JOIN LATERAL jsonb_array_elements(COALESCE(p.node -> 'customFields', '[]'::jsonb)) WITH ORDINALITY AS f(node, i)
        WHERE EXISTS (SELECT 1 FROM pass)
        ORDER BY p.node ->> 'id', COALESCE(f.node ->> 'id', f.node ->> 'label'), f.i DESC`)
  },
  {
    name: "custom_fields_landed",
    sql: (sql, v) => sql`
      INSERT INTO custom_fields AS t (account_id, parent_type, parent_id, field_key, field_id, label, kind, unit, value_text, value, raw)
      SELECT ${v.accountId}, ${parentType}, f.parent_id, f.field_key, f.node ->> 'id', f.node ->> 'label', f.node ->> '__typename',
        f.node ->> 'unit', ${sql.literal(customFieldValue.text)}, ${sql.literal(customFieldValue.json)}, f.raw
      FROM custom_field_rows AS f
      ON CONFLICT (account_id, parent_type, parent_id, field_key) DO UPDATE SET
        field_id = EXCLUDED.field_id, label = EXCLUDED.label, kind = EXCLUDED.kind, unit = EXCLUDED.unit,
        value_text = EXCLUDED.value_text, value = EXCLUDED.value, raw = EXCLUDED.raw, synced_at = now(), deleted_at = NULL
      WHERE (t.field_id, t.label, t.kind, t.unit, t.value_text, t.value, t.raw, t.deleted_at)
        IS DISTINCT FROM (EXCLUDED.field_id, EXCLUDED.label, EXCLUDED.kind, EXCLUDED.unit, EXCLUDED.value_text, EXCLUDED.value, EXCLUDED.raw, NULL::timestamptz)
      RETURNING 1`
  },
  {
    // the parents' live custom fields less those the page brings (a set difference, as for line items)
    name: "custom_fields_removed",
    sql: (sql, v) => sql`
      UPDATE custom_fields AS t SET deleted_at = now()
      FROM (
        SELECT k.parent_id, k.field_key FROM custom_fields AS k
        WHERE k.account_id = ${v.accountId} AND k.parent_type = ${parentType} AND k.deleted_at IS NULL AND EXISTS (SELECT 1 FROM pass)
          AND k.parent_id = ANY (ARRAY(SELECT node ->> 'id' FROM page_rows))
        EXCEPT
        SELECT f.parent_id, f.field_key FROM custom_field_rows AS f
      ) AS gone
      WHERE t.account_id = ${v.accountId} AND t.parent_type = ${parentType} AND t.parent_id = ANY (ARRAY(SELECT node ->> 'id' FROM page_rows))
        AND t.parent_id = gone.parent_id AND t.field_key = gone.field_key`
  }
]
