/**
 * `durable-agents/mcp`: durable agents as an MCP server, one tool per named agent, over any MCP
 * transport (`createAgentMcpServer`, 2025-11-25), over stdio (`serveAgentsOverStdio`) or over
 * streamable HTTP behind the HTTP API's access rules (`createMcpHttpServer`), the last two in
 * both MCP revisions, 2025-11-25 and 2026-07-28; with tools, resources and prompts of your own
 * beside the agents (`extend`, an `McpServerExtension`). For the MCP servers whose tools your
 * agents use, see `mcpServers` on the plugin (`durable-agents`).
 */
export { createAgentMcpServer, progressText, toolResult, type AgentMcpServerOptions } from './agent-mcp-server';
export { createMcpHttpServer } from './mcp-http-server';
export { serveAgentsOverStdio, type StdioConnection } from './stdio-server';
export type { McpServerExtension, ModernExtensionContext } from './mcp-server-extension';
export type { ExtensionTask } from './modern/extension-tasks';
