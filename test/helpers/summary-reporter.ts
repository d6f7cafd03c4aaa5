/**
 * Ends the run with one plain line, `vitest: N passed, N failed, N skipped`, that CI
 * systems read without knowing vitest's own format. It never says less than vitest's exit
 * status: a test that did not run because a hook or import of its suite failed counts as
 * failed, not skipped; so does an error outside every test (an `afterAll` that threw, a
 * file that failed to load), each unhandled error, and, when vitest ends the run as failed
 * for any reason this count did not see, one more.
 */
import type { Reporter, SerializedError, TestCase, TestModule, TestRunEndReason, TestSuite } from 'vitest/node';

export interface Summary {
  passed: number;
  failed: number;
  skipped: number;
  /** Of `failed`: failures outside any test (hooks, imports, unhandled errors, the run itself). */
  outsideTests: number;
}

/** A suite or file whose own hooks or collection failed. */
const broken = (node: TestSuite | TestModule) => node.errors().length > 0;

function underBroken(test: TestCase): boolean {
  for (let node: TestSuite | TestModule = test.parent; ; node = node.parent) {
    if (broken(node)) return true;
    if (node.type === 'module') return false;
  }
}

/** Whether the test was meant to run (not `.skip`, `.todo`, or filtered out). */
const meantToRun = (test: TestCase) => test.options.mode === 'run' || test.options.mode === 'only';

export function summarize(modules: ReadonlyArray<TestModule>, unhandledErrors: number, reason: TestRunEndReason): Summary {
  const s: Summary = { passed: 0, failed: 0, skipped: 0, outsideTests: 0 };
  for (const m of modules) {
    const failedTests = new Set<TestCase>();
    for (const test of m.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') s.passed += 1;
      else if (state === 'failed' || (meantToRun(test) && underBroken(test))) failedTests.add(test);
      else s.skipped += 1;
    }
    s.failed += failedTests.size;
    // A broken suite or file none of whose tests is counted failed (an afterAll that threw,
    // a file that failed to import) still failed the run; so did a file vitest calls failed.
    let outside = 0;
    for (const node of [m, ...m.children.allSuites()]) {
      if (broken(node) && ![...node.children.allTests()].some((t) => failedTests.has(t))) outside += 1;
    }
    if (m.state() === 'failed' && failedTests.size + outside === 0) outside = 1;
    s.outsideTests += outside;
  }
  s.outsideTests += unhandledErrors;
  if (reason !== 'passed' && s.failed + s.outsideTests === 0) s.outsideTests = 1;
  s.failed += s.outsideTests;
  return s;
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, reason: TestRunEndReason): void {
    const s = summarize(modules, unhandledErrors.length, reason);
    const note = s.outsideTests
      ? `vitest: ${s.outsideTests} of the failures happened outside tests (hooks, imports, unhandled errors)\n`
      : '';
    process.stdout.write(`\n${note}vitest: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped\n`);
  }
}
