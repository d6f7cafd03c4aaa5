/** `notify-mcp/union`: the union library re-exported, so imports of the server's path keep working. */
export * from '@notify-mcp/union';
