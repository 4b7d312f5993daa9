/**
 * `durable-agents/mcp`: durable agents as an MCP server, one tool per named agent, over any MCP
 * transport (`createAgentMcpServer`) or over streamable HTTP behind the HTTP API's access rules
 * (`createMcpHttpServer`). For the MCP servers whose tools your agents use, see `mcpServers` on
 * the plugin (`durable-agents`).
 */
export { createAgentMcpServer, progressText, toolResult, type AgentMcpServerOptions } from './agent-mcp-server';
export { createMcpHttpServer } from './mcp-http-server';
