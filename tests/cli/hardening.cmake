# Bad input in every input path (docs/limits.md): exit status 2 with file, line (or member) and field,
# nothing half-written, no input file modified. Included by tests/cli/CMakeLists.txt.
set(DSE_HEADER "id,option,shared_kib,shared_sectors,data_kib,data_sectors,weight_kib,weight_sectors,acc_kib,acc_sectors,area_mm2,dynamic_mj,static_mj,wakeup_nj,energy_mj,offchip_mj")
set(TINY --config configs/tiny-2x2.yaml --model models/capsnet-tiny.yaml)
set(TINY_SH "--config configs/tiny-2x2.yaml --model models/capsnet-tiny.yaml")  # inside sh -c strings

# Numbers: decimal only, nothing truncated, rounded, nan or inf.
cli_test(harden_seed_decimal 0 "^same$" sh -c "${CAPSGEN} golden ${TINY_SH} --quiet --seed 010 --json ${TMP}/seed010.json > /dev/null && ${CAPSGEN} golden ${TINY_SH} --quiet --seed 10 --json ${TMP}/seed10.json > /dev/null && cmp -s ${TMP}/seed010.json ${TMP}/seed10.json && echo same")
cli_test(harden_seed_hex 2 "--seed: expected a decimal integer, got '0x1'" ${CAPSGEN} golden ${TINY} --seed 0x1)
cli_test(harden_dse_id_hex 2 "--dse-id: expected a decimal integer, got '0x1'" ${CAPSGEN} generate --config configs/tiny-2x2.yaml --dse x.csv --dse-id 0x1 --out ${TMP}/hx)
foreach(_case "kib_wrap;1,SEP-PG,0,0,4294967297,2,1,2,1,2,0,0,0,0,0,0;data_kib: expected a decimal integer in \\[0, 65536\\], got '4294967297'"
              "kib_1e30;1,SEP-PG,0,0,1e30,2,1,2,1,2,0,0,0,0,0,0;data_kib: expected a decimal integer in \\[0, 65536\\], got '1e30'"
              "sectors_1e30;1,SEP-PG,0,0,1,1e30,1,2,1,2,0,0,0,0,0,0;data_sectors: expected a decimal integer in \\[0, 256\\], got '1e30'"
              "sectors_half;1,SEP-PG,0,0,1,0.5,1,2,1,2,0,0,0,0,0,0;data_sectors: expected a decimal integer in \\[0, 256\\], got '0.5'"
              "id_fraction;1.9,SEP-PG,0,0,1,2,1,2,1,2,0,0,0,0,0,0;id: expected a decimal integer in \\[0, [0-9]+\\], got '1.9'"
              "area_nan;1,SEP-PG,0,0,1,2,1,2,1,2,nan,0,0,0,0,0;area_mm2: expected a finite number >= 0, got 'nan'")
  list(GET _case 0 _name)
  list(GET _case 1 _row)
  list(GET _case 2 _regex)
  string(REPLACE ";" "," _row "${_row}")
  cli_test(harden_dse_${_name} 2 "dse-${_name}.csv:2:1: ${_regex}" sh -c "printf '${DSE_HEADER}\\n${_row}\\n' > ${TMP}/dse-${_name}.csv && ${CAPSGEN} generate --config configs/tiny-2x2.yaml --dse ${TMP}/dse-${_name}.csv --dse-id 1 --out ${TMP}/dse-${_name}-rtl")
endforeach()
cli_test(harden_dse_truncated_gz 2 "dse-trunc.csv.gz: --dse: not a readable CSV or gzip file" sh -c "(printf '${DSE_HEADER}\\n'\nfor i in $(seq 1 400)\ndo printf '%s,SEP,0,0,1,1,1,1,1,1,0.5,0.5,0.5,0.5,0.5,0.5\\n' \$i\ndone) | gzip -c > ${TMP}/dse-full.csv.gz && head -c $(( $(stat -c %s ${TMP}/dse-full.csv.gz) / 2 )) ${TMP}/dse-full.csv.gz > ${TMP}/dse-trunc.csv.gz && ${CAPSGEN} generate --config configs/tiny-2x2.yaml --dse ${TMP}/dse-trunc.csv.gz --dse-id 1 --out ${TMP}/dse-trunc-rtl")
cli_test(harden_cacti_size 2 "cacti-big.out:1: Cache size: expected an integer in \\[1, [0-9]+\\], got '1e30'" sh -c "printf 'Cache size : 1e30\\nBlock size : 8\\n' > ${TMP}/cacti-big.out && ${CAPSGEN} dse memory ${TINY_SH} --cacti ${TMP}/cacti-big.out --out ${TMP}/cacti-big")

# Flags.
cli_test(harden_out_option_as_value 2 "--out: missing value DIR \\('--quiet' is an option" sh -c "cd ${TMP} && ${CAPSGEN} generate --config ${ROOT}/configs/tiny-2x2.yaml --out --quiet\nrc=\$?\ntest -e ./--quiet && exit 99\nexit \$rc")
cli_test(harden_generate_positional 2 "stray: unexpected argument" ${CAPSGEN} generate --config configs/tiny-2x2.yaml --out ${TMP}/stray stray)
cli_test(harden_golden_index_alone 2 "--index: needs --input or --dataset" ${CAPSGEN} golden ${TINY} --index 5)
cli_test(harden_yaml_second_document 2 "two-docs.yaml:[0-9]+:1: a second YAML document" sh -c "cat configs/tiny-2x2.yaml > ${TMP}/two-docs.yaml && printf -- '---\\nname: other\\n' >> ${TMP}/two-docs.yaml && ${CAPSGEN} validate --config ${TMP}/two-docs.yaml")

# Limits.
cli_test(harden_config_dev_zero 2 "/dev/zero: larger than [0-9]+ bytes" ${CAPSGEN} validate --config /dev/zero)
foreach(_case "routing;s/routing_iterations: 3/routing_iterations: 65537/;layers\\[2\\]\\.routing_iterations: expected an integer in \\[1, 32\\]"
              "capsule_dim;s/capsule_dim: 8/capsule_dim: 65536/;layers\\[2\\]\\.capsule_dim: expected an integer in \\[1, 256\\]"
              "padding;s/kernel: 5/kernel: 5\\n    padding: 1073741825/;layers\\[0\\]\\.padding: expected an integer in \\[0, 65536\\]")
  list(GET _case 0 _name)
  list(GET _case 1 _sed)
  list(GET _case 2 _regex)
  cli_test(harden_net_${_name} 2 "net-${_name}.yaml:[0-9]+:[0-9]+: ${_regex}" sh -c "sed '${_sed}' models/capsnet-tiny.yaml > ${TMP}/net-${_name}.yaml && ${CAPSGEN} validate --model ${TMP}/net-${_name}.yaml")
endforeach()
cli_test(harden_net_padding_output 2 "net-pad.yaml:[0-9]+: layers\\[0\\]\\.padding: layer 'conv1': output 65538x65538 exceeds" sh -c "sed 's/kernel: 5/kernel: 5\\n    padding: 32765/' models/capsnet-tiny.yaml > ${TMP}/net-pad.yaml && ${CAPSGEN} validate --model ${TMP}/net-pad.yaml")
cli_test(harden_net_too_big_for_golden 2 "net-big.yaml:[0-9]+: layers\\[2\\]: layer 'classcaps': the weights up to classcaps.W pass 67108864 elements" sh -c "sed 's/num_capsules: 5/num_capsules: 100000/' models/capsnet-tiny.yaml > ${TMP}/net-big.yaml && ${CAPSGEN} validate --model ${TMP}/net-big.yaml")
cli_test(harden_net_too_big_golden 2 "net-big-golden.yaml:[0-9]+: layers\\[2\\]: layer 'classcaps': the weights up to classcaps.W pass 67108864 elements, the limit for the golden model" sh -c "sed 's/num_capsules: 5/num_capsules: 100000/' models/capsnet-tiny.yaml > ${TMP}/net-big-golden.yaml && ${CAPSGEN} golden --config configs/tiny-2x2.yaml --model ${TMP}/net-big-golden.yaml")
cli_test(harden_net_routing_int_max 2 "net-rmax.yaml:[0-9]+:[0-9]+: layers\\[2\\]\\.routing_iterations: expected an integer in \\[1, 32\\], got 2147483647" sh -c "sed 's/routing_iterations: 3/routing_iterations: 2147483647/' models/capsnet-tiny.yaml > ${TMP}/net-rmax.yaml && ${CAPSGEN} golden --config configs/tiny-2x2.yaml --model ${TMP}/net-rmax.yaml")
# Rejected before anything is allocated: within 200 MB of address space (it once took 550 MB and 11 s).
cli_test(harden_vgg16_golden_early 2 "vgg16.yaml:[0-9]+: layers\\[[0-9]+\\]\\.type: layer '.*': the golden model runs conv2d" sh -c "ulimit -v 200000 && ${CAPSGEN} golden --config configs/tiny-2x2.yaml --model models/vgg16.yaml")
# A 1 MiB .npz whose member inflates to 1 GiB (tests/cli/npz_bomb.py): refused from its directory.
cli_test(harden_npz_bomb 2 "bomb.npz: conv1.W.npy: the archive's members inflate to more than 256 MiB \\(the limit. raise it with --max-array-mib\\)" sh -c "python3 tests/cli/npz_bomb.py ${TMP}/bomb.npz && ulimit -v 400000 && ${CAPSGEN} golden ${TINY_SH} --weights ${TMP}/bomb.npz")
cli_test(harden_vgg16_validate 0 "network 'vgg16' is valid: .*for capsgen dse dram only" ${CAPSGEN} validate --model models/vgg16.yaml)

# All or nothing.
cli_test(harden_golden_reports_all_or_none 2 "/nonexistent/x.json: cannot create" sh -c "rm -f ${TMP}/ok.md && ${CAPSGEN} golden ${TINY_SH} --quiet --report ${TMP}/ok.md --json /nonexistent/x.json\nrc=\$?\ntest -e ${TMP}/ok.md && exit 99\ntest -e ${TMP}/ok.md.tmp && exit 98\nexit \$rc")
foreach(_case "missing_dir;/nonexistent/x.npz;/nonexistent/x.npz: cannot create"
              "directory;${TMP}/dump-dir;dump-dir: is a directory, nothing was written")
  list(GET _case 0 _name)
  list(GET _case 1 _dump)
  list(GET _case 2 _regex)
  cli_test(harden_golden_dump_fails_${_name} 2 "${_regex}" sh -c "rm -f ${TMP}/dump-${_name}.md ${TMP}/dump-${_name}.json && mkdir -p ${TMP}/dump-dir && ${CAPSGEN} golden ${TINY_SH} --quiet --report ${TMP}/dump-${_name}.md --json ${TMP}/dump-${_name}.json --dump ${_dump}\nrc=\$?\nls ${TMP}/dump-${_name}.* 2> /dev/null && exit 99\ntest -z \"\$(ls ${TMP}/dump-dir)\" || exit 98\nexit \$rc")
endforeach()
cli_test(harden_golden_same_path_twice 2 "twice.md: given for two outputs, nothing was written" sh -c "rm -f ${TMP}/twice.md && ${CAPSGEN} golden ${TINY_SH} --quiet --report ${TMP}/twice.md --json ${TMP}/twice.md\nrc=\$?\ntest -e ${TMP}/twice.md && exit 99\nexit \$rc")
cli_test(harden_random_config_keeps_user_file 2 "user.yaml: --config: exists and is not a random preset" sh -c "cp configs/tiny-2x2.yaml ${TMP}/user.yaml && ${CAPSGEN} generate --random-config 3 --config ${TMP}/user.yaml --out ${TMP}/user-rtl\nrc=\$?\ncmp -s configs/tiny-2x2.yaml ${TMP}/user.yaml || exit 99\nexit \$rc")
cli_test(harden_random_config_rerun 0 "^rerun ok$" sh -c "rm -rf ${TMP}/r3.yaml ${TMP}/r3-rtl && ${CAPSGEN} generate --random-config 3 --config ${TMP}/r3.yaml --out ${TMP}/r3-rtl --quiet && ${CAPSGEN} generate --random-config 3 --config ${TMP}/r3.yaml --out ${TMP}/r3-rtl --quiet && ${CAPSGEN} validate --config ${TMP}/r3.yaml > /dev/null && echo rerun ok")
cli_test(harden_regress_name_dotdot 2 "dotdot.yaml:1:7: name: '\\.\\.' is not usable as a directory name" sh -c "printf \"name: '..'\\nentries:\\n  - configs: [configs/tiny-2x2.yaml]\\n    networks: [models/capsnet-tiny.yaml]\\n\" > ${TMP}/dotdot.yaml && ${CAPSGEN} regress ${TMP}/dotdot.yaml --dry-run")
cli_test(harden_regress_expansion 2 "huge.yaml:3: entries: the list expands to more than 10000 jobs" sh -c "printf 'name: huge\\nentries:\\n  - configs: [configs/small-4x4.yaml]\\n    networks: [models/capsnet-small.yaml]\\n    weights: ${MNIST_W}\\n    dataset: mnist\\n    seeds: 0-100000\\n    indices: 0-100000\\n' > ${TMP}/huge.yaml && ${CAPSGEN} regress ${TMP}/huge.yaml --dry-run --out ${TMP}/huge")

# Data sets.
cli_test(harden_json_pixel_overflow 2 "badjson/0.json: data: not readable JSON" sh -c "mkdir -p ${TMP}/badjson && printf '{\"data\": [1e400]}' > ${TMP}/badjson/0.json && ${CAPSGEN} accuracy --weights ${MNIST_W} --dataset mnist --data-dir ${TMP}/badjson")
cli_test(harden_dataset_wrong_size 2 "fit28: images: mnist/test images are \\[1,28,28\\], the network 'capsnet-tiny' \\(models/capsnet-tiny.yaml\\) takes input \\[1,12,12\\]" sh -c "mkdir -p ${TMP}/fit28 && for d in 0 1 2 3 4 5 6 7 8 9\ndo (printf '{\"data\": ['\nfor i in $(seq 1 3919)\ndo printf '0,'\ndone\nprintf '0]}') > ${TMP}/fit28/\$d.json\ndone && ${CAPSGEN} golden ${TINY_SH} --dataset mnist --data-dir ${TMP}/fit28 --index 0")
cli_test(harden_accuracy_empty_test_set 2 "train-only: images: the mnist/test split has no images" sh -c "mkdir -p ${TMP}/train-only && for d in 0 1 2 3 4 5 6 7 8 9\ndo (printf '{\"data\": ['\nfor i in $(seq 1 783)\ndo printf '0,'\ndone\nprintf '0]}') > ${TMP}/train-only/\$d.json\ndone && ${CAPSGEN} accuracy --weights ${MNIST_W} --dataset mnist --data-dir ${TMP}/train-only --calib-count 2")
cli_test(harden_generate_stale_temporaries 0 "^stale removed, fresh kept$" sh -c "rm -rf ${TMP}/stale-rtl ${TMP}/.stale-rtl.* && mkdir ${TMP}/.stale-rtl.tmp-abc123 ${TMP}/.stale-rtl.tmp-fresh1 && touch ${TMP}/.stale-rtl.tmp-abc123/pe.v && touch -d '2 hours ago' ${TMP}/.stale-rtl.tmp-abc123 && ${CAPSGEN} generate --config configs/tiny-2x2.yaml --out ${TMP}/stale-rtl --quiet && test ! -e ${TMP}/.stale-rtl.tmp-abc123 && test -d ${TMP}/.stale-rtl.tmp-fresh1 && echo 'stale removed, fresh kept'")
foreach(_w 14 15 16)
  cli_test(harden_data_width_${_w} 2 "wide${_w}.yaml:14:[0-9]+: widths.data: ${_w} bits: the activation unit's sum of 32 squares is [0-9]+ bits wide" sh -c "sed -e 's/^  data: 8/  data: ${_w}/' -e 's/^  weight: 8/  weight: ${_w}/' -e 's/^  psum: 20 .*/  psum: 40/' -e 's/^  act: 8 .*/  act: ${_w}/' configs/tiny-2x2.yaml > ${TMP}/wide${_w}.yaml && ${CAPSGEN} generate --config ${TMP}/wide${_w}.yaml --out ${TMP}/wide${_w}-rtl\nrc=\$?\ntest -e ${TMP}/wide${_w}-rtl && exit 99\nexit \$rc")
endforeach()
# 16-bit weights (with 13-bit data, the widest): the blocks are generated (rtl_lint_tiny-2x2-wide lints them).
cli_test(harden_weight_width_16 0 "capsgen_memsys not generated \\(widths.data: capsgen_memsys stores one data code per 8-bit lane: 13 bits do not fit\\)" ${CAPSGEN} generate --config tests/data/configs/tiny-2x2-wide.yaml --out ${TMP}/wide-rtl)
foreach(_case "data10;-e 's/^  data: 8/  data: 10/' -e 's/^  weight: 8/  weight: 10/' -e 's/^  psum: 20 .*/  psum: 24/' -e 's/^  act: 8 .*/  act: 10/';widths.data: capsgen_memsys stores one data code per 8-bit lane: 10 bits do not fit"
              "banks;;scratchpad.data.banks: capsgen_memsys reads or writes the words of one wr \\(record write\\) in one cycle: array.cols = 5")
  list(GET _case 0 _name)
  list(GET _case 1 _sed)
  list(GET _case 2 _regex)
  cli_test(harden_validate_notes_no_chip_3x5_${_name} 0 "3x5-${_name}.yaml: note: no capsgen_memsys and no capsgen_chip for this preset \\(${_regex}" sh -c "sed -e 's/rows: 2/rows: 3/' -e 's/cols: 2/cols: 5/' ${_sed} configs/tiny-2x2.yaml > ${TMP}/3x5-${_name}.yaml && ${CAPSGEN} validate --config ${TMP}/3x5-${_name}.yaml")
endforeach()

# One calibration rule (gen/golden/workload.hpp): golden and compile compute the same tensors for a
# seed, and golden on one calibration image does not; with sim: rtl_sim_calibration_agrees.
cli_test(harden_calibration_golden_compile 0 "calibration agrees: golden, compile on 4 calibration images: [0-9]+ tensors equal. golden on 1 differs" python3 tests/cli/calibration_agrees.py ${CAPSGEN} ${TMP}/calibration -- ${TINY} --seed 1)

# JSON documents (switching activity, chip energy) are read with the text-file cap, and synth reads
# its activity before it writes anything.
cli_test(harden_synth_activity_bad_json 2 "bad-activity.json: --activity: \\[json.exception.parse_error" sh -c "rm -rf ${TMP}/bad-activity-out && printf '{\"schema\": ' > ${TMP}/bad-activity.json && ${CAPSGEN} synth --config configs/tiny-2x2.yaml --target asic-osu018 --activity ${TMP}/bad-activity.json --out ${TMP}/bad-activity-out\nrc=\$?\ntest -e ${TMP}/bad-activity-out && exit 99\nexit \$rc")
cli_test(harden_synth_activity_dev_zero 2 "/dev/zero: --activity: larger than [0-9]+ bytes" ${CAPSGEN} synth --config configs/tiny-2x2.yaml --target asic-osu018 --activity /dev/zero --out ${TMP}/zero-activity-out)
cli_test(harden_synth_activity_other_preset 2 "tiny-2x2-pe-activity.json: preset: the activity was simulated on tiny-2x2, this run synthesizes small-4x4" sh -c "rm -rf ${TMP}/other-activity-out && ${CAPSGEN} synth --config configs/small-4x4.yaml --target asic-osu018 --activity tests/data/energy/tiny-2x2-pe-activity.json --out ${TMP}/other-activity-out\nrc=\$?\ntest -e ${TMP}/other-activity-out && exit 99\nexit \$rc")
cli_test(harden_sim_datapath_energy_dev_zero 2 "/dev/zero: --datapath-energy: larger than [0-9]+ bytes" sh -c "rm -rf ${TMP}/dp-zero && ${CAPSGEN} sim ${TINY_SH} --memory dram --datapath-energy /dev/zero --work ${TMP}/dp-zero\nrc=\$?\ntest -e ${TMP}/dp-zero && exit 99\nexit \$rc")
cli_test(harden_sim_datapath_energy_other_network 2 "tiny-2x2-capsnet-tiny.json: preset: the document is of capsnet-tiny on tiny-2x2, this run is deepcaps-tiny on tiny-2x2" sh -c "rm -rf ${TMP}/dp-other && ${CAPSGEN} sim --config configs/tiny-2x2.yaml --model models/deepcaps-tiny.yaml --memory dram --datapath-energy bench/energy/tiny-2x2-capsnet-tiny.json --work ${TMP}/dp-other\nrc=\$?\ntest -e ${TMP}/dp-other && exit 99\nexit \$rc")
