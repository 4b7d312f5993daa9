import { AgentCard } from '@a2a-js/sdk';
import type { AgentSummary } from '../contracts/activity-interface';

/** What an agent's card says besides the agent itself. */
export interface AgentCardOptions {
  /** The agent's A2A base URL (`<host>/a2a/<agent>`), where its interfaces answer. */
  url: string;
  /** The package's version, the card's `version`. */
  version: string;
  /** Whether the server asks for bearer tokens (AGENT_HTTP_TOKENS): the card says so. */
  bearer: boolean;
  /**
   * The authenticated extended card (`GetExtendedAgentCard`), for callers with a token: it names
   * the agent's tools. The public card of a server with tokens (which anyone may read, to learn
   * how to authenticate) does not, and says an extended card exists.
   */
  extended?: boolean;
  /**
   * Where the server's gRPC binding answers (`host:port`, as gRPC clients dial it) and the tenant
   * that names this agent in its calls (empty for the server's default agent); absent when the
   * server serves no gRPC.
   */
  grpc?: { url: string; tenant: string };
}

/**
 * A named agent's A2A Agent Card (protocol 1.0, and 0.3 for older clients): JSON-RPC and HTTP+JSON at the agent's base URL, gRPC when served,
 * streaming, one skill (the agent, with its description and examples), and the bearer scheme of
 * the HTTP API when tokens are required. Returned in the SDK's typed form; `AgentCard.toJSON`
 * writes it as the wire has it.
 */
export function agentCard(agent: AgentSummary, o: AgentCardOptions): AgentCard {
  const description = agent.description ?? `The durable-agents agent "${agent.name}"`;
  // The tools an agent uses are for those who may call it: on an open server anyone, on a server
  // with tokens the holders of one (the extended card).
  const showTools = !o.bearer || o.extended === true;
  return AgentCard.fromJSON({
    name: agent.name,
    description,
    version: o.version,
    supportedInterfaces: [
      { url: o.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: o.url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ...(o.grpc ? [{ url: o.grpc.url, protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: o.grpc.tenant }] : []),
      // Clients of protocol 0.3 (which send no A2A-Version header) at the same URL.
      { url: o.url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: o.url, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: o.bearer },
    ...(o.bearer
      ? {
          securitySchemes: {
            bearer: {
              httpAuthSecurityScheme: {
                scheme: 'Bearer',
                description: 'One of the server\'s AGENT_HTTP_TOKENS, as "Authorization: Bearer <token>"',
              },
            },
          },
          securityRequirements: [{ schemes: { bearer: { list: [] } } }],
        }
      : {}),
    defaultInputModes: ['text/plain', 'application/json', 'image/png', 'image/jpeg', 'image/gif', 'image/webp'],
    defaultOutputModes: agent.structuredOutput ? ['application/json'] : ['text/plain'],
    skills: [
      {
        id: agent.name,
        name: agent.name,
        description,
        tags: ['durable-agents', ...(showTools ? agent.tools.slice(0, 20) : [])],
        examples: agent.examples ?? [],
      },
    ],
  });
}
