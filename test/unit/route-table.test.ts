import { matchPath, matchRoute, type Route, type RouteContext } from '../../src/http/route-table';
import { ROUTES } from '../../src/http/routes';

const o = {} as RouteContext;
const route = (method: Route['method'], path: string, when?: Route['when']): Route => ({
  method,
  path,
  ...(when ? { when } : {}),
  handle: () => undefined,
});

describe('the HTTP route table', () => {
  it('matches literal segments and takes :name parameters', () => {
    expect(matchPath('/runs/:run/approvals/:callId', ['runs', 'r1', 'approvals', 'c2'])).toEqual({
      run: 'r1',
      callId: 'c2',
    });
    expect(matchPath('/runs/:run', ['runs'])).toBeUndefined();
    expect(matchPath('/runs/:run', ['conversations', 'x'])).toBeUndefined();
    expect(matchPath('/', [])).toEqual({});
  });

  it('takes the first route of the method, says which methods a path allows, and skips routes turned off', () => {
    const table = [route('GET', '/a/:id'), route('DELETE', '/a/:id'), route('GET', '/page', () => false)];
    expect(matchRoute(table, 'DELETE', ['a', '1'], o)).toMatchObject({ params: { id: '1' }, route: table[1] });
    expect(matchRoute(table, 'POST', ['a', '1'], o)).toEqual({ allowed: ['GET', 'DELETE'] });
    expect(matchRoute(table, 'GET', ['page'], o)).toEqual({ allowed: [] });
    expect(matchRoute(table, 'GET', ['nowhere'], o)).toEqual({ allowed: [] });
  });

  it('is the one list of the API: no route twice, and a literal segment before a parameter where both match', () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    // A literal path is reached: no earlier route of its method shadows it.
    for (const r of ROUTES) {
      const parts = r.path.split('/').filter(Boolean);
      const literal = !parts.some((p) => p.startsWith(':'));
      if (!literal) continue;
      expect({ path: r.path, found: matchRoute(ROUTES, r.method, parts, {} as RouteContext) }).toMatchObject({
        path: r.path,
        found: { route: r },
      });
    }
    for (const area of ['/runs', '/conversations', '/api/chat', '/ag-ui', '/schedules', '/memory', '/tenants'])
      expect(ROUTES.some((r) => r.path.startsWith(area))).toBe(true);
  });
});
