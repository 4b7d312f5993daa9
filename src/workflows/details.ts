/**
 * The Temporal UI's "current details" of a run or conversation as it goes: which agent, which
 * definition of it (`agentVersion`) and which build answer, so "which prompt answered this
 * customer" is on the workflow's page. Empty when none is known (an unnamed agent, unversioned).
 */
export function versionDetails(s: {
  agent?: { name?: string };
  agentVersion?: string;
  buildId?: string;
  tenant?: string;
}): string {
  const parts = [
    ...(s.tenant ? [`tenant **${s.tenant}**`] : []),
    ...(s.agent?.name ? [`agent **${s.agent.name}**`] : []),
    ...(s.agentVersion ? [`version \`${s.agentVersion}\``] : []),
    ...(s.buildId ? [`build \`${s.buildId}\``] : []),
  ];
  return parts.join(' · ');
}
