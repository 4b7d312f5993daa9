/**
 * `durable-agents/ui`: what a page needs to talk to durable conversations through the AI SDK
 * (`useChat`, `Chat`): a chat transport with a Stop that stops the durable turn and a stream that
 * reconnects by itself. It runs in the browser: it imports nothing of the rest of the package.
 */
export { ChatRequestError, DurableChatTransport, type DurableChatTransportOptions } from './durable-chat-transport';
export { watchChatTurns, type ChatTurnEvent, type WatchChatTurnsOptions } from './watch-chat-turns';
