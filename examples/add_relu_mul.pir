{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[256,1000]} : () -> tensor<256x1000xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"y",place:Place(undefined:0),shape:[256,1000]} : () -> tensor<256x1000xf32>
    (%2) = "pd_op.data" () {dtype:float32,name:"w",place:Place(undefined:0),shape:[1000]} : () -> tensor<1000xf32>
    (%3) = "pd_op.add" (%0, %1) {} : (tensor<256x1000xf32>, tensor<256x1000xf32>) -> tensor<256x1000xf32>
    (%4) = "pd_op.relu" (%3) {} : (tensor<256x1000xf32>) -> tensor<256x1000xf32>
    (%5) = "pd_op.multiply" (%4, %2) {} : (tensor<256x1000xf32>, tensor<1000xf32>) -> tensor<256x1000xf32>
}
