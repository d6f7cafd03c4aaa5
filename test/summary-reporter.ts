/**
 * Ends the run with one plain line, `vitest: N passed, N failed, N skipped`, that CI
 * systems read without knowing vitest's own format.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const m of modules) {
      for (const test of m.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') count.passed += 1;
        else if (state === 'failed') count.failed += 1;
        else count.skipped += 1;
      }
      if (m.state() === 'failed' && ![...m.children.allTests()].length) count.failed += 1;
    }
    process.stdout.write(`\nvitest: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}
