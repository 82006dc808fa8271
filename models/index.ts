// The Sequelize models, defined once per Sequelize instance with their associations: a toolgate
// holds its own set, so two toolgates on two databases in one process never rebind each other's.
import type { Sequelize } from 'sequelize';
import { defineAgent, type Agent } from './agent';
import { defineAgentAccessRule, type AgentAccessRule } from './agent-access-rule';
import { defineAgentToolkit, type AgentToolkit } from './agent-toolkit';
import { defineAgentToolkitRule, type AgentToolkitRule } from './agent-toolkit-rule';
import { defineToolCall, type ToolCall } from './tool-call';
import { defineToolkit, type Toolkit } from './toolkit';

export type { Agent, AgentAccessRule, AgentToolkit, AgentToolkitRule, ToolCall, Toolkit };

export interface Models {
  Agent: typeof Agent;
  Toolkit: typeof Toolkit;
  AgentToolkit: typeof AgentToolkit;
  AgentToolkitRule: typeof AgentToolkitRule;
  AgentAccessRule: typeof AgentAccessRule;
  ToolCall: typeof ToolCall;
}

export function defineModels(sequelize: Sequelize): Models {
  const models: Models = {
    Agent: defineAgent(sequelize),
    Toolkit: defineToolkit(sequelize),
    AgentToolkit: defineAgentToolkit(sequelize),
    AgentToolkitRule: defineAgentToolkitRule(sequelize),
    AgentAccessRule: defineAgentAccessRule(sequelize),
    ToolCall: defineToolCall(sequelize),
  };
  const { Agent: A, Toolkit: T, AgentToolkit: AT, AgentToolkitRule: R, AgentAccessRule: AR, ToolCall: C } = models;
  A.hasMany(AT, { foreignKey: 'agent_id', as: 'attachments', onDelete: 'CASCADE' });
  AT.belongsTo(A, { foreignKey: 'agent_id', as: 'agent' });
  T.hasMany(AT, { foreignKey: 'toolkit_id', as: 'attachments', onDelete: 'CASCADE' });
  AT.belongsTo(T, { foreignKey: 'toolkit_id', as: 'toolkit' });
  AT.hasMany(R, { foreignKey: 'agent_toolkit_id', as: 'rules', onDelete: 'CASCADE' });
  R.belongsTo(AT, { foreignKey: 'agent_toolkit_id', as: 'attachment' });
  A.hasMany(AR, { foreignKey: 'agent_id', as: 'accessRules', onDelete: 'CASCADE' });
  A.hasMany(C, { foreignKey: 'agent_id', as: 'toolCalls', onDelete: 'CASCADE' });
  return models;
}
