// The seed's scenario has Sundae add the shop's owner to the thread when she passes a refund on:
// her escalation address is mara@thescoop.com (SEMANTICS §11), which makes Mara a participant of the
// thread, so Mara's answer joins it. Set once, where Sundae has none: an operator's own is kept.
import type { QueryInterface } from 'sequelize';

export async function up(queryInterface: QueryInterface): Promise<void> {
  await queryInterface.sequelize.query(
    `UPDATE agents SET escalation_address = 'mara@thescoop.com' WHERE name = 'Sundae' AND escalation_address IS NULL`,
  );
}

// Nothing to undo: the address is an operator's to change, like any other.
export async function down(): Promise<void> {}
