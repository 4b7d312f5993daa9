import { temporal } from '@temporalio/proto';
import {
  missingSearchAttributes,
  searchAttributeCreateCommands,
  AGENT_SEARCH_ATTRIBUTE_NAMES,
  type AgentSearchAttributeName,
} from '../core/run/search-attributes';

/** The part of a connection (client or worker) the check needs. */
export interface OperatorServiceHolder {
  operatorService: {
    listSearchAttributes(
      request: temporal.api.operatorservice.v1.IListSearchAttributesRequest,
    ): Promise<temporal.api.operatorservice.v1.IListSearchAttributesResponse>;
  };
}

/** `INDEXED_VALUE_TYPE_KEYWORD_LIST` → `KeywordList`: the names the `temporal` CLI uses. */
function typeName(value: temporal.api.enums.v1.IndexedValueType | null | undefined): string {
  const raw = temporal.api.enums.v1.IndexedValueType[value ?? 0] ?? 'INDEXED_VALUE_TYPE_UNSPECIFIED';
  return raw
    .replace('INDEXED_VALUE_TYPE_', '')
    .toLowerCase()
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

/**
 * Which agent search attributes the namespace has registered with the right type. Missing ones
 * are reported through `warn` with the exact commands that add them; runs go on without them
 * (their workflows upsert only registered attributes). A server that will not say (permissions)
 * leaves the attributes off on this worker, also with a warning.
 */
export async function checkSearchAttributes(
  connection: OperatorServiceHolder,
  namespace: string,
  warn: (message: string) => void,
): Promise<AgentSearchAttributeName[]> {
  let existing: Record<string, string>;
  try {
    const response = await connection.operatorService.listSearchAttributes({ namespace });
    existing = Object.fromEntries(
      Object.entries(response.customAttributes ?? {}).map(([name, type]) => [name, typeName(type)]),
    );
  } catch (err) {
    warn(
      `could not list the search attributes of namespace "${namespace}" (${(err as Error).message}); runs on this worker keep no AgentStatus/AgentName attributes.`,
    );
    return [];
  }
  const problems = missingSearchAttributes(existing);
  if (problems.length > 0) {
    const missing = problems.filter((p) => p.problem === 'missing');
    const wrong = problems.filter((p) => p.problem === 'wrong_type');
    const lines = [
      `namespace "${namespace}" lacks search attributes the agents keep up to date (runs work without them, but cannot be filtered by them):`,
    ];
    if (missing.length)
      lines.push(
        `  missing: ${missing.map((p) => `${p.name} (${p.type})`).join(', ')}; add them with:`,
        ...searchAttributeCreateCommands(namespace, missing).map((c) => `    ${c}`),
      );
    for (const p of wrong)
      lines.push(
        `  ${p.name} is registered as ${p.actual}, not ${p.type}: it is left alone (remove it and add it as ${p.type} to use it).`,
      );
    lines.push('  (Temporal Cloud: add them on the namespace page, or with tcld namespace search-attributes add.)');
    warn(lines.join('\n'));
  }
  const bad = new Set(problems.map((p) => p.name));
  return AGENT_SEARCH_ATTRIBUTE_NAMES.filter((n) => !bad.has(n));
}
