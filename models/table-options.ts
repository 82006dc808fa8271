// How every toolgate table is mapped: snake_case columns, and the timestamps it keeps
// (created_at, and updated_at unless the table never changes a row).
import type { InitOptions, Model, Sequelize } from 'sequelize';

export function tableOptions<M extends Model>(
  sequelize: Sequelize,
  modelName: string,
  tableName: string,
  updatedAt: 'updated_at' | false = 'updated_at',
): InitOptions<M> {
  return { sequelize, modelName, tableName, underscored: true, timestamps: true, createdAt: 'created_at', updatedAt };
}
