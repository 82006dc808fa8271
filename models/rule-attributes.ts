// The columns of a rule, an agent's access rule or an attachment's gate rule alike: an allow/deny
// kind and an address pattern (SEMANTICS §4, §9). What owns the rule is each table's own.
import { DataTypes } from 'sequelize';

export const RULE_ATTRIBUTES = {
  id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
  kind: { type: DataTypes.STRING(8), allowNull: false },
  pattern: { type: DataTypes.STRING(320), allowNull: false },
  created_at: DataTypes.DATE,
  updated_at: DataTypes.DATE,
} as const;
