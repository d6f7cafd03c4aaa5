// `node --import ./test/register.mjs script.mjs`: the script's imports of test tools resolve from
// test/ (test/packages.mjs). For bench/ and soak/, which run outside vitest.
import { register } from 'node:module';

register('./packages.mjs', import.meta.url);
