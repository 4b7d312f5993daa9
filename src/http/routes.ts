import type { Route } from './route-table';
import { pageRoutes } from './page-routes';
import { runRoutes } from './run-routes';
import { conversationRoutes } from './conversation-routes';
import { chatRoutes } from './use-chat/chat-routes';
import { agUiRoutes } from './ag-ui/ag-ui-routes';
import { scheduleRoutes } from './schedule-routes';
import { memoryRoutes } from './memory-routes';
import { tenantRoutes } from './tenant-routes';
import { deploymentRoutes } from './deployment-routes';
import { workspaceRoutes } from './workspace-routes';

/**
 * The route table: every route of the API, area by area (each module lists its own, with its
 * bodies and statuses); the first whose method and path match a request serves it.
 */
export const ROUTES: readonly Route[] = [
  ...pageRoutes,
  ...runRoutes,
  ...conversationRoutes,
  ...chatRoutes,
  ...agUiRoutes,
  ...scheduleRoutes,
  ...memoryRoutes,
  ...tenantRoutes,
  ...deploymentRoutes,
  ...workspaceRoutes,
];
