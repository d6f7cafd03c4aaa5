export declare const TEST_PACKAGE_JSON: URL;
export declare const TEST_PACKAGES: ReadonlySet<string>;
export declare function packageOf(specifier: string): string | undefined;
