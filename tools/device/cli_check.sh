#!/bin/bash
# Usage on the device: bash tools/device/cli_check.sh (MULTIRES=path/to/multires; default .gpu/multires).
# CLI on the device: wavedec/waverec/wavedecn/waverecn with --device cuda against --device cpu.
set -e
T=$(mktemp -d)
python3 -c "
import numpy as np
rng=np.random.default_rng(1)
np.save('$T/x1.npy', rng.standard_normal((3,1001)).astype(np.float32))
np.save('$T/x2.npy', rng.standard_normal((130,97)))
np.save('$T/x3.npy', rng.standard_normal((9,20,17)).astype(np.float32))
"
M=${MULTIRES:-.gpu/multires}
for dev in cpu cuda; do
  $M wavedec $T/x1.npy -o $T/c1_$dev.npz --wavelet db4 --level 4 --mode symmetric --device $dev
  $M waverec $T/c1_$dev.npz -o $T/r1_$dev.npy --wavelet db4 --mode symmetric --device $dev
  $M wavedecn $T/x2.npy -o $T/c2_$dev.npz --wavelet sym5 --level 3 --mode reflect --device $dev
  $M waverecn $T/c2_$dev.npz -o $T/r2_$dev.npy --wavelet sym5 --mode reflect --device $dev
  $M wavedecn $T/x3.npy -o $T/c3_$dev.npz --wavelet haar --level 2 --mode periodization --axes 0,2 --device $dev
  $M waverecn $T/c3_$dev.npz -o $T/r3_$dev.npy --wavelet haar --mode periodization --axes 0,2 --device $dev
done
python3 -c "
import numpy as np
T='$T'
for k in ['c1','c2','c3']:
    a=np.load(f'{T}/{k}_cpu.npz'); b=np.load(f'{T}/{k}_cuda.npz')
    assert sorted(a.files)==sorted(b.files), (k, a.files, b.files)
    e=max(float(np.abs(a[f]-b[f]).max()/max(1e-30,np.abs(a[f]).max())) for f in a.files)
    print(k, 'keys', len(a.files), 'max rel diff cuda vs cpu', e)
for k,x in [('r1','x1'),('r2','x2'),('r3','x3')]:
    a=np.load(f'{T}/{k}_cpu.npy'); b=np.load(f'{T}/{k}_cuda.npy'); x=np.load(f'{T}/{x}.npy')
    cut=tuple(slice(0,s) for s in x.shape)
    print(k, a.shape, b.shape, 'cuda vs cpu', float(np.abs(a-b).max()), 'vs input', float(np.abs(b[cut]-x).max()))
"
$M wavedecn $T/x2.npy -o $T/bad.npz --wavelet nosuch --device cuda || echo "(expected error above)"
$M waverecn $T/c1_cpu.npz -o $T/bad.npy --wavelet db4 --device cuda || echo "(expected error above)"
# Streamed batches from the CLI: a 1 MiB limit on 4000 x 1001 f32 rows.
python3 -c "
import numpy as np
np.save('$T/x4.npy', np.random.default_rng(4).standard_normal((4000,1001)).astype(np.float32))"
$M wavedec $T/x4.npy -o $T/c4_in.npz --wavelet db4 --level 3 --device cuda
$M wavedec $T/x4.npy -o $T/c4_st.npz --wavelet db4 --level 3 --device cuda --gpu-mem-limit 1MiB
$M waverec $T/c4_st.npz -o $T/r4_st.npy --wavelet db4 --device cuda --gpu-mem-limit 1MiB
python3 -c "
import numpy as np
a=np.load('$T/c4_in.npz'); b=np.load('$T/c4_st.npz')
print('streamed CLI wavedec equal to in-core:', all((a[f]==b[f]).all() for f in a.files))
print('streamed CLI waverec max error:', float(np.abs(np.load('$T/r4_st.npy')[:, :1001]-np.load('$T/x4.npy')).max()))"
$M wavedec $T/x4.npy -o $T/c4_bad.npz --wavelet db4 --device cuda --gpu-mem-limit 1KiB || echo "(expected error above)"
# The codec: --device cuda (also streamed in small batches, and with
# --gpus 1) must write the CPU's bytes; the file decodes within the bound.
$M make-field --kind turbulent --size 96 -o $T/f.npy > /dev/null
$M compress $T/f.npy -o $T/f_cpu.mrz --error-bound rel:1e-3 --brick 32 --device cpu | tail -1
$M compress $T/f.npy -o $T/f_cuda.mrz --error-bound rel:1e-3 --brick 32 --device cuda | tee $T/f_cuda.log | tail -3
grep -q "into page-locked memory" $T/f_cuda.log  # a float32 .npy takes the page-locked path
$M compress $T/f.npy -o $T/f_st.mrz --error-bound rel:1e-3 --brick 32 --device cuda --gpus 1 --gpu-mem-limit 8MiB | tail -1
cmp $T/f_cpu.mrz $T/f_cuda.mrz && cmp $T/f_cpu.mrz $T/f_st.mrz && echo "CLI codec: cuda, streamed and cpu bytes identical"
$M compress data/rocket.pgm -o $T/r_cuda.mrz --error-bound psnr:40 --device cuda | tail -1
$M compress data/rocket.pgm -o $T/r_cpu.mrz --error-bound psnr:40 --device cpu | tail -1
cmp $T/r_cpu.mrz $T/r_cuda.mrz && echo "CLI codec (2-D image): identical"
$M decompress $T/f_cuda.mrz -o $T/f_back.npy | tail -1
$M compress $T/f.npy -o $T/f_bad.mrz --device cuda --gpu-mem-limit 1KiB || echo "(expected error above)"
$M compress $T/f.npy -o $T/f_bad.mrz --device cuda --gpus 9 || echo "(expected error above)"
$M decompress $T/f_cuda.mrz -o $T/f_back_cpu.npy --device cpu | tail -1
$M decompress $T/f_cuda.mrz -o $T/f_back_gpu.npy --device cuda | tail -1
$M decompress $T/f_cuda.mrz -o $T/f_reg_gpu.npy --device cuda --region 3:50,10:11,: | tail -1
python3 -c "
import numpy as np
a=np.load('$T/f_back_cpu.npy'); b=np.load('$T/f_back_gpu.npy'); x=np.load('$T/f.npy'); r=np.load('$T/f_reg_gpu.npy')
print('CLI decode gpu == cpu:', bool((a==b).all()), '| region == crop:', bool((r==b[3:50,10:11,:]).all()), '| max error', float(np.abs(b.astype(float)-x).max()))
assert a.dtype == b.dtype == np.float32 and (a==b).all() and (r==b[3:50,10:11,:]).all()"
# The page-locked path for raw float32 and a 2-D .npy; float64 and a
# Fortran-order .npy take the ordinary path; each gives the CPU's bytes.
python3 -c "
import numpy as np
x=np.load('$T/f.npy'); x.tofile('$T/f.raw')
rng=np.random.default_rng(2)
np.save('$T/g2.npy', rng.standard_normal((300,517)).astype(np.float32))
np.save('$T/g64.npy', x.astype(np.float64))
np.save('$T/gF.npy', np.asfortranarray(x))"
$M compress $T/f.raw --raw f32 --shape 96,96,96 -o $T/fr_cuda.mrz --error-bound rel:1e-3 --brick 32 --device cuda | grep -q "page-locked"
cmp $T/f_cpu.mrz $T/fr_cuda.mrz && echo "CLI codec: raw float32 through page-locked memory: identical"
for k in g2 g64 gF; do
  $M compress $T/$k.npy -o $T/${k}_cpu.mrz --error-bound abs:1e-2 --device cpu > /dev/null
  $M compress $T/$k.npy -o $T/${k}_cuda.mrz --error-bound abs:1e-2 --device cuda > $T/$k.log
  cmp $T/${k}_cpu.mrz $T/${k}_cuda.mrz && echo "CLI codec: $k identical ($(grep -c page-locked $T/$k.log) page-locked)"
  $M decompress $T/${k}_cuda.mrz -o $T/${k}_gpu.npy --device cuda > /dev/null
  $M decompress $T/${k}_cuda.mrz -o $T/${k}_cpu.npy --device cpu > /dev/null
  cmp $T/${k}_gpu.npy $T/${k}_cpu.npy && echo "CLI decode: $k identical"
done
head -c 100000 $T/f.npy > $T/trunc.npy
if $M compress $T/trunc.npy -o $T/trunc.mrz --device cuda; then echo "a truncated .npy compressed"; exit 1; fi
test ! -e $T/trunc.mrz && echo "(expected error above; nothing written)"
$M compress $T/f.raw --raw f32 --shape 96,96,95 -o $T/trunc.mrz --device cuda || echo "(expected error above)"
echo "cli_check: all passed"
# CWT into the output file's mapped pages on the GPU, and ssq, against the CPU.
python3 -c "
import numpy as np
np.save('$T/s.npy', np.random.default_rng(2).standard_normal(1 << 20).astype(np.float32))
"
for dev in cpu cuda; do
  $M cwt $T/s.npy -o $T/W_$dev.npy --wavelet cmor1.5-1.0 --scales-log 1:1024:256 --precision f32 --device $dev
  $M cwt $T/s.npy -o $T/M_$dev.npy --wavelet cmor1.5-1.0 --scales-log 1:1024:256 --precision f32 --output-kind magnitude --output-dtype f16 --device $dev
  $M ssq $T/s.npy -o $T/T_$dev.npy --wavelet morse60-3 --scales-voices 2:512:16 --device $dev --ridges 1 --ridges-out $T/R_$dev.npy
done
python3 -c "
import numpy as np
T='$T'
for k in ['W','M','T']:
    a=np.load(f'{T}/{k}_cpu.npy', mmap_mode='r'); b=np.load(f'{T}/{k}_cuda.npy', mmap_mode='r')
    assert a.shape==b.shape and a.dtype==b.dtype, (k, a.shape, b.shape, a.dtype, b.dtype)
    e=float(np.linalg.norm((a.astype(np.complex128)-b).ravel())/np.linalg.norm(a.astype(np.complex128).ravel()))
    print(k, a.shape, a.dtype, 'rel L2 cuda vs cpu', e)
    assert e < (2e-3 if k=='M' else 1e-4), k
r1=np.load(f'{T}/R_cpu.npy'); r2=np.load(f'{T}/R_cuda.npy'); print('ridge rows equal', (r1==r2).mean())
"
# cwt --stream on the GPU: the file equals the GPU's whole transform bit for bit.
python3 -c "
import numpy as np
np.save('$T/s.npy', np.random.default_rng(6).standard_normal(3_000_001))"
$M cwt $T/s.npy -o $T/s_whole.npy --wavelet cmor1.5-1.0 --scales-log 2:300:40 --precision f32 --device cuda
$M cwt $T/s.npy -o $T/s_stream.npy --wavelet cmor1.5-1.0 --scales-log 2:300:40 --precision f32 --device cuda --stream --chunk 262144 --explain | tail -1
python3 -c "
import numpy as np
a=np.load('$T/s_whole.npy'); b=np.load('$T/s_stream.npy')
assert a.dtype==b.dtype and a.shape==b.shape, (a.dtype, b.dtype, a.shape, b.shape)
assert a.tobytes()==b.tobytes(), 'GPU stream differs from the GPU transform'
print('CLI cwt --stream on the GPU: equal bit for bit to the whole GPU transform', a.shape)"
