/**
 * Expands `${VAR}` references in a configuration value from `env`, so that secrets stay in the
 * environment rather than in the file (the MCP and A2A configurations). `missing` hears of each
 * variable that is not set; it is replaced by nothing.
 */
export function expandReferences(text: string, env: NodeJS.ProcessEnv, missing: (variable: string) => void): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, variable: string) => {
    const value = env[variable];
    if (value === undefined) missing(variable);
    return value ?? '';
  });
}
