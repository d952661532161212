# The reference 0.19.0 backends' `echo` round trip, for the roundtrip bench:
# `python reference_roundtrip.py [HOST PORT USER KEY]` with hermes-agent importable.
import sys, time
from tools.environments.local import LocalEnvironment
from tools.environments.ssh import SSHEnvironment
def p50(e, n=30):
    e.execute('echo hi')
    ts=[]
    for i in range(n):
        t=time.perf_counter(); r=e.execute('echo hi'); ts.append(time.perf_counter()-t)
    ts.sort(); return ts[n//2]*1000, r
print('reference local p50 ms %.2f' % p50(LocalEnvironment(cwd='/tmp', timeout=30))[0])
if len(sys.argv) > 1:
    host, port, user, key = sys.argv[1:5]
    e = SSHEnvironment(host=host, user=user, port=int(port), key_path=key, cwd='/tmp', timeout=30)
    ms, r = p50(e)
    print('reference ssh p50 ms %.2f' % ms, r)
