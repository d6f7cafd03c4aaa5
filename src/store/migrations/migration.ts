/** One schema step, with the same meaning on both engines (../migrations.ts lists them). */
export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
}
