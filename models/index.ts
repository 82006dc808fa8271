// The Sequelize models, initialized once per Sequelize instance with their associations.
import type { Sequelize } from 'sequelize';
import { Agent } from './agent';
import { AgentToolkit } from './agent-toolkit';
import { AgentToolkitRule } from './agent-toolkit-rule';
import { ToolCall } from './tool-call';
import { Toolkit } from './toolkit';

export { Agent, AgentToolkit, AgentToolkitRule, ToolCall, Toolkit };

export interface Models {
  Agent: typeof Agent;
  Toolkit: typeof Toolkit;
  AgentToolkit: typeof AgentToolkit;
  AgentToolkitRule: typeof AgentToolkitRule;
  ToolCall: typeof ToolCall;
}

let boundTo: Sequelize | null = null;

/**
 * Binds the model classes to one Sequelize instance. The classes are module-level: one toolgate
 * database per process at a time; binding again to the same instance is a no-op.
 */
export function initModels(sequelize: Sequelize): Models {
  const models: Models = { Agent, Toolkit, AgentToolkit, AgentToolkitRule, ToolCall };
  if (boundTo === sequelize) return models;
  Agent.initialize(sequelize);
  Toolkit.initialize(sequelize);
  AgentToolkit.initialize(sequelize);
  AgentToolkitRule.initialize(sequelize);
  ToolCall.initialize(sequelize);
  // Associations outlive a rebind (a test that reconnects); defining them twice would throw.
  if (!Agent.associations.attachments) defineAssociations();
  boundTo = sequelize;
  return models;
}

function defineAssociations(): void {
  Agent.hasMany(AgentToolkit, { foreignKey: 'agent_id', as: 'attachments', onDelete: 'CASCADE' });
  AgentToolkit.belongsTo(Agent, { foreignKey: 'agent_id', as: 'agent' });
  Toolkit.hasMany(AgentToolkit, { foreignKey: 'toolkit_id', as: 'attachments', onDelete: 'CASCADE' });
  AgentToolkit.belongsTo(Toolkit, { foreignKey: 'toolkit_id', as: 'toolkit' });
  AgentToolkit.hasMany(AgentToolkitRule, { foreignKey: 'agent_toolkit_id', as: 'rules', onDelete: 'CASCADE' });
  AgentToolkitRule.belongsTo(AgentToolkit, { foreignKey: 'agent_toolkit_id', as: 'attachment' });
  Agent.hasMany(ToolCall, { foreignKey: 'agent_id', as: 'toolCalls', onDelete: 'CASCADE' });
}
