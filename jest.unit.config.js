/**
 * Jest: the tests that need no database (the core, the run, the middleware, the models, the MCP client's pure parts), for a
 * loop of seconds: `npm run test:unit`. `npm test` runs them too, with everything else.
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  globalSetup: undefined,
  globalTeardown: undefined,
  roots: ['<rootDir>/test/core', '<rootDir>/test/run', '<rootDir>/test/middleware', '<rootDir>/test/llm', '<rootDir>/test/mcp/unit'],
};
