// The workflows of a worker that has workflows of its own: the user's (the bundler resolves
// USER_WORKFLOWS to their workflowsPath, see AgentsPlugin.configureBundler) and the agent workflows.
// Plain CommonJS, bundled as it is: a static file in the package, so nothing is generated on disk.
/* eslint-disable @typescript-eslint/no-require-imports */
const own = require('__durable_agents_user_workflows__');
const agents = require('../workflows/bundle');

for (const name of Object.keys(agents)) {
  if (Object.prototype.hasOwnProperty.call(own, name)) {
    throw new Error('the workflow "' + name + '" is defined by durable-agents; rename yours');
  }
}
module.exports = Object.assign({}, own, agents);
