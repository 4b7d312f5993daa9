/**
 * Expands `${VAR}` references in a configuration value from `env`, so that secrets stay in the
 * environment rather than in the file (the MCP and A2A configurations). `missing` hears of each
 * variable that is not set; it is replaced by nothing.
 */
function expandReferences(text: string, env: NodeJS.ProcessEnv, missing: (variable: string) => void): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, variable: string) => {
    const value = env[variable];
    if (value === undefined) missing(variable);
    return value ?? '';
  });
}

/**
 * An expander for the fields of one configuration entry (`at`, e.g. `mcpServers.files`): a string
 * field's `${VAR}` references filled in, every problem (not a string, a variable not set) added to
 * `problems` under the field's name, so a configuration reports all of them at once.
 */
export function fieldExpander(
  at: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
): (field: string, text: unknown) => string {
  return (field, text) => {
    if (typeof text !== 'string') {
      problems.push(`${at}.${field} must be a string`);
      return '';
    }
    return expandReferences(text, env, (variable) =>
      problems.push(`${at}.${field} uses \${${variable}}, which is not set in the environment`),
    );
  };
}
